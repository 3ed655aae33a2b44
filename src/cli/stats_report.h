/* Attention statistics as JSON (graft stats --json) and as text tables. */
#ifndef GRAFT_CLI_STATS_REPORT_H
#define GRAFT_CLI_STATS_REPORT_H

#include <cjson/cJSON.h>

#include "stats/attn_stats.h"

/* [{"layer":l, "heads":[{"head":h, "mean_distance":d, "entropy":e, "concentration":c, "output_rms":r,
 *                        "mean_distance_no_sink":d0, "sink_share":a0}]}] */
cJSON *attn_stats_json(const attn_stats *s);
void attn_stats_print(const attn_stats *s);

#endif
