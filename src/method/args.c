#include "method/args.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "method/opt_limits.h"
#include "core/error.h"

static const opt_spec *find(const opt_spec *s, int n, const char *name, size_t len) {
    for (int i = 0; i < n; i++)
        if (strlen(s[i].name) == len && strncmp(s[i].name, name, len) == 0) return &s[i];
    return NULL;
}

static int set_value(const opt_spec *o, const char *v) {
    char *end;
    errno = 0;
    switch (o->kind) {
    case OPT_INT:
    case OPT_LONG: {
        long long x = strtoll(v, &end, 10);
        if (*v == 0 || *end != 0) return gf_fail("--%s needs an integer, got '%s'", o->name, v);
        /* past long long: strtoll gave its limit, which every range refuses */
        if (opt_check(o->name, (double)x) != 0) return -1;
        if (errno || (o->kind == OPT_INT && (x < INT_MIN || x > INT_MAX)) || x < LONG_MIN || x > LONG_MAX)
            return gf_fail("--%s: %s is out of range", o->name, v);
        if (o->kind == OPT_INT) *(int *)o->dst = (int)x;
        else *(long *)o->dst = (long)x;
        return 0;
    }
    case OPT_DOUBLE: {
        double x = strtod(v, &end); /* "nan", "inf" and overflows parse: opt_check refuses them */
        if (*v == 0 || *end != 0) return gf_fail("--%s needs a number, got '%s'", o->name, v);
        if (opt_check(o->name, x) != 0) return -1;
        *(double *)o->dst = x;
        return 0;
    }
    case OPT_STR: *(const char **)o->dst = v; return 0;
    case OPT_STR_LIST: {
        str_list *l = o->dst;
        if (l->n >= (int)(sizeof l->items / sizeof l->items[0])) return gf_fail("too many --%s", o->name);
        l->items[l->n++] = v;
        return 0;
    }
    case OPT_FLAG: break;
    }
    return gf_fail("--%s takes no value", o->name);
}

int args_parse(int argc, char **argv, const opt_spec *specs, int n_specs,
               const char **pos, int max_pos, int *n_pos) {
    *n_pos = 0;
    bool only_pos = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_pos || a[0] != '-' || a[1] == 0) {
            if (*n_pos >= max_pos) return gf_fail("unexpected argument '%s'", a);
            pos[(*n_pos)++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_pos = true;
            continue;
        }
        const char *name = a[1] == '-' ? a + 2 : a + 1;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const opt_spec *o = find(specs, n_specs, name, len);
        if (!o || (a[1] != '-' && len != 1)) return gf_fail("unknown option %s", a);
        if (o->kind == OPT_FLAG) {
            if (eq) return gf_fail("--%s takes no value", o->name);
            *(bool *)o->dst = true;
            continue;
        }
        const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (!v) return gf_fail("--%s needs a value", o->name);
        if (set_value(o, v) != 0) return -1;
    }
    return 0;
}

void args_usage(const opt_spec *specs, int n_specs) {
    for (int i = 0; i < n_specs; i++) {
        const char *arg = "";
        switch (specs[i].kind) {
        case OPT_INT: case OPT_LONG: arg = " N"; break;
        case OPT_DOUBLE: arg = " X"; break;
        case OPT_STR: case OPT_STR_LIST: arg = " VALUE"; break;
        case OPT_FLAG: break;
        }
        char left[64];
        snprintf(left, sizeof left, "--%s%s", specs[i].name, arg);
        fprintf(stderr, "  %-22s %s\n", left, specs[i].help);
    }
}
