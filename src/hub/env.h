/* huggingface_hub's environment, read the way it reads it:
 *   HF_ENDPOINT       default https://huggingface.co (trailing '/' dropped)
 *   HF_HOME           default $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface
 *   HF_HUB_CACHE      default $HF_HOME/hub (HUGGINGFACE_HUB_CACHE is the older name)
 *   HF_TOKEN          else HUGGING_FACE_HUB_TOKEN, else the file HF_TOKEN_PATH ($HF_HOME/token)
 *   HF_HUB_OFFLINE    1/ON/YES/TRUE (TRANSFORMERS_OFFLINE too)
 *   HF_HUB_DOWNLOAD_TIMEOUT  seconds without a byte before a transfer is abandoned (default 10)
 *   HF_HUB_ETAG_TIMEOUT      seconds for connects and metadata requests (default 10)
 * graft's own knobs (tests shorten them): GRAFT_HUB_MAX_RETRIES (5),
 * GRAFT_HUB_RETRY_BASE_MS (1000, doubled per attempt, capped at 16 s), GRAFT_HUB_JOBS (4),
 * GRAFT_HUB_MAX_UNANNOUNCED (bytes a file whose size neither the model info nor
 * the HEAD gives may have: 64 GiB). */
#ifndef GRAFT_HUB_ENV_H
#define GRAFT_HUB_ENV_H

#include <stdbool.h>

char *hub_endpoint(void);  /* caller frees */
char *hub_home(void);      /* caller frees */
char *hub_cache_dir(void); /* caller frees */
char *hub_token(void);     /* caller frees; NULL when there is none */
bool hub_offline(void);
double hub_env_double(const char *name, double fallback); /* a finite number >= 0, else fallback */
long long hub_unannounced_max(void);

#endif
