# tools: cpu
