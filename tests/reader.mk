# tests for reader
