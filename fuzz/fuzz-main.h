/*
 * fuzz/fuzz-main.h - included before a tool's source in the fuzz and
 * replay programs, whose main() becomes fuzz_tool_main() (-Dmain=...).
 */
#ifndef REC_FUZZ_MAIN_H
#define REC_FUZZ_MAIN_H
int fuzz_tool_main(int argc, char **argv);
#endif
