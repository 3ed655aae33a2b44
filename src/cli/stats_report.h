/* Attention statistics as text tables (their JSON: method/reports.h). */
#ifndef GRAFT_CLI_STATS_REPORT_H
#define GRAFT_CLI_STATS_REPORT_H

#include <cjson/cJSON.h>

#include "method/reports.h"
#include "stats/attn_stats.h"

void attn_stats_print(const attn_stats *s);

#endif
