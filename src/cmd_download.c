/* graft download REPO[@REV][:PATH] [--include GLOB]... [--revision REV] [--json] [--quiet]
 * Prints the local snapshot folder (or, with --json, the path, commit and files):
 * argv -> download request -> hub_download -> print. */
#include <stdatomic.h>
#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "method/args.h"
#include "cli/common.h"
#include "cli/signals.h"
#include "commands.h"
#include "core/error.h"
#include "hub/hub.h"
#include "hub/progress_bar.h"
#include "hub/repo_ref.h"

static atomic_int cancel_flag; /* lock-free: a signal handler may set it */
static void on_sigint(int sig) {
    atomic_store(&cancel_flag, 1); /* the transfer stops; its partial file stays for a resume */
    cli_record_stop(sig);          /* then main ends the process by the signal (130) */
}

/* --events: every hub_event as one JSON line on stderr, for scripts and tests. */
static void print_event(const hub_event *ev, void *user) {
    static const char *const names[] = {"started", "progress", "verified", "done", "error"};
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "state", names[ev->state]);
    if (ev->file) cJSON_AddStringToObject(o, "file", ev->file);
    else cJSON_AddNullToObject(o, "file");
    cJSON_AddNumberToObject(o, "file_done", (double)ev->file_done);
    cJSON_AddNumberToObject(o, "file_total", (double)ev->file_total);
    cJSON_AddNumberToObject(o, "total_done", (double)ev->total_done);
    cJSON_AddNumberToObject(o, "total_total", (double)ev->total_total);
    cJSON_AddNumberToObject(o, "files_done", ev->files_done);
    cJSON_AddNumberToObject(o, "files_total", ev->files_total);
    cJSON_AddNumberToObject(o, "bytes_per_s", ev->bytes_per_s);
    cJSON_AddNumberToObject(o, "eta_s", ev->eta_s);
    if (ev->message) cJSON_AddStringToObject(o, "message", ev->message);
    char *s = cJSON_PrintUnformatted(o);
    fprintf(stderr, "%s\n", s);
    free(s);
    cJSON_Delete(o);
}

static cJSON *result_json(const hub_result *r) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "path", r->path);
    cJSON_AddStringToObject(o, "commit", r->commit);
    cJSON *files = cJSON_AddArrayToObject(o, "files");
    for (int i = 0; i < r->n_files; i++) {
        cJSON *f = cJSON_CreateObject();
        cJSON_AddStringToObject(f, "name", r->files[i].name);
        cJSON_AddNumberToObject(f, "size", (double)r->files[i].size);
        cJSON_AddStringToObject(f, "sha256", r->files[i].sha256);
        cJSON_AddItemToArray(files, f);
    }
    return o;
}

int cmd_download(int argc, char **argv) {
    request r;
    bool done;
    int rc = cli_request(&r, REQ_DOWNLOAD, argc, argv, &done);
    if (done) /* after the usage and the options */
        fprintf(stderr, "\nDownloads into the Hugging Face cache ($HF_HUB_CACHE) and prints the snapshot folder.\n"
                        "Without --include or :PATH: config, generation config, tokenizer and safetensors files.\n");
    if (rc || done) return rc;
    const download_req *q = &r.u.download;
    const bool json = r.co.json, quiet = q->quiet, events = q->events;
    const str_list include = q->include;
    hub_ref ref;
    hub_parse_ref(r.pos[0], &ref); /* request_check parsed it, and refused a second revision */
    if (q->revision) snprintf(ref.revision, sizeof ref.revision, "%s", q->revision);
    hub_progress_bar bar;
    hub_progress_bar_init(&bar, stderr, quiet);
    hub_callbacks cb = {.on_event = events ? print_event : hub_progress_bar_event, .user = &bar,
                        .cancel = &cancel_flag};
    struct sigaction sa = {.sa_handler = on_sigint}, old_int, old_term;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, NULL, &old_int);
    if (old_int.sa_handler != SIG_IGN) sigaction(SIGINT, &sa, NULL); /* a background job ignores Ctrl-C */
    sigaction(SIGTERM, &sa, &old_term);
    hub_request req = {.repo = ref.repo, .revision = ref.revision, .path = ref.path[0] ? ref.path : NULL,
                       .include = include.items, .n_include = include.n};
    hub_result res;
    rc = hub_download(&req, &cb, &res);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (rc != 0) {
        fprintf(stderr, "graft download: %s\n", gf_last_error());
        return 1;
    }
    if (json) {
        cli_print_json(result_json(&res));
    } else {
        printf("%s\n", res.path);
    }
    hub_result_free(&res);
    return 0;
}
