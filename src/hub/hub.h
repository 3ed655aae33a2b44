/* graft's Hugging Face Hub client: downloads into the huggingface_hub cache
 * (see cache.h for the layout, env.h for the environment) and reports
 * progress through callbacks. docs/hub.md describes the behaviour. */
#ifndef GRAFT_HUB_HUB_H
#define GRAFT_HUB_HUB_H

#include <stdatomic.h>

typedef enum {
    HUB_EV_STARTED,  /* a file's transfer begins (file_done > 0 when resuming) */
    HUB_EV_PROGRESS, /* bytes arrived (throttled to a few events per second) */
    HUB_EV_VERIFIED, /* size and (for LFS files) sha256 checked */
    HUB_EV_DONE,     /* the file is linked into the snapshot (or was already there);
                        with file == NULL: the whole download finished */
    HUB_EV_ERROR,    /* message says why; file == NULL: the whole download failed */
} hub_state;

typedef struct {
    hub_state state;
    const char *file;         /* repo path of the file; NULL for whole-download events */
    long long file_done, file_total;   /* bytes; total -1 when unknown */
    long long total_done, total_total; /* over every selected file */
    int files_done, files_total;
    double bytes_per_s;       /* recent transfer speed, all files together */
    double eta_s;             /* seconds left at that speed; -1 when unknown */
    const char *message;      /* HUB_EV_ERROR only */
} hub_event;

typedef void (*hub_event_fn)(const hub_event *ev, void *user);

/* Events arrive on worker threads, one at a time (never concurrently). */
typedef struct {
    hub_event_fn on_event; /* may be NULL */
    void *user;
    atomic_int *cancel;  /* may be NULL; set non-zero to stop: transfers abort, partial files stay for resuming */
} hub_callbacks;

typedef struct {
    const char *repo;              /* "org/name" */
    const char *revision;          /* NULL: "main" */
    const char *path;              /* a file inside the repo (llama2.c checkpoint): it and the
                                      tokenizer beside it (tokenizer.bin, tok*.bin); NULL: none */
    const char *const *include;    /* fnmatch globs; with none (and no path): the Hugging Face
                                      model files (config, generation config, tokenizer, safetensors, index) */
    int n_include;
} hub_request;

typedef struct {
    char *name;
    long long size;
    char sha256[65];
} hub_file_result;

typedef struct {
    char *path;        /* the snapshot folder */
    char commit[41];
    hub_file_result *files;
    int n_files;
} hub_result;

/* Downloads what req selects (offline: finds it in the cache). 0, or -1 with a
 * one-line error (gf_last_error). Files that completed stay cached even when
 * another failed. */
int hub_download(const hub_request *req, const hub_callbacks *cb, hub_result *out);
void hub_result_free(hub_result *r);

/* The default Hugging Face file set, and the llama2.c tokenizer names beside a checkpoint. */
int hub_is_model_file(const char *name);
int hub_is_tokenizer_beside(const char *name, const char *checkpoint);

#endif
