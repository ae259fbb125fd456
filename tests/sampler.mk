# tests for sampler
