# tools: dump
