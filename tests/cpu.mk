# tests for cpu
