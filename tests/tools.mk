# tests for tools
