#include "commands.h"

const command graft_commands[] = {
    {"inspect", cmd_inspect, "print a teacher's architecture, tensors and tokenizer"},
    {"generate", cmd_generate, "generate text (greedy unless --temp)"},
    {"bench-decode", cmd_bench_decode, "decoding tokens/s and memory per sequence at each context and batch"},
    {"ppl", cmd_ppl, "perplexity of a text file"},
    {"download", cmd_download, "download a Hugging Face repo into the shared cache, print its folder"},
    {"stats", cmd_stats, "per-head attention statistics (distance, entropy, output RMS)"},
    {"halflife", cmd_halflife, "every GDN head's idle and effective half-life on text, beside the teacher's distance, with flags"},
    {"select", cmd_select, "choose which attention layers to keep (uniform, ar, ga-s2, manual)"},
    {"convert", cmd_convert, "convert a teacher into a hybrid GDN student folder (Taylor-Calibrate)"},
    {"recall", cmd_recall, "long-context recall: RULER-style needle tasks over lengths and depths"},
    {"eval", cmd_eval, "perplexity of a teacher or a student folder"},
    {"ablate", cmd_ablate, "ablation table: strategies x ratios x initializations"},
    {"train", cmd_train, "recovery training: distill the teacher into a student (KL or hidden alignment)"},
    {"race", cmd_race, "tokens-to-target race of initializations under one token budget"},
    {"tui", cmd_tui, "the terminal workbench (--demo: synthetic data, no model)"},
};
const int graft_n_commands = sizeof graft_commands / sizeof graft_commands[0];
