#include "method/build_layers.h"

#include "method/method_opts.h"
#include "convert/build.h"

int method_capture_corpus(const model *m, const char *corpus, const split_spec *spec, token_split *sp,
                          teacher_capture *cal, teacher_capture *held, const method_hooks *h) {
    method_phase(h, "tokenize");
    if (token_split_make(sp, m->tok, corpus, NULL, spec) != 0) return -1;
    method_phase(h, "teacher pass");
    if (method_capture(m, sp, cal, held, &h->progress) != 0) {
        token_split_free(sp);
        return -1;
    }
    return 0;
}

int method_build_layers(student *s, const bool *layers, const teacher_capture *cal, const teacher_capture *held,
                        const method_hooks *h) {
    return student_build_layers_observed(s, layers, cal, held && held->L ? held : NULL, h->build ? h->build : &h->progress,
                                         h->obs);
}
