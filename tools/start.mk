# tools: start
