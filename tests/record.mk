# tests for record
