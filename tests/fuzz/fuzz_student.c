/* libFuzzer harness: a student folder, config.json (the teacher's config
 * plus "graft_student") [FUZZ_SEP model.safetensors [FUZZ_SEP tokenizer]];
 * a part left out keeps the previous input's file. Loaded with student_load,
 * then used: a hybrid forward pass (student_eval_nll) on a few ids. */
#include <string.h>

#include "core/error.h"
#include "harness.h"
#include "student/student.h"
#include "student/student_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char *const files[] = {"config.json", "model.safetensors", "tokenizer.bin"};
    fuzz_write_parts(data, size, files, 3, true);
    student s;
    if (student_load(&s, fuzz_dir(), NULL) == 0) {
        const model_config *c = &s.m->cfg;
        if (model_param_count(c) <= (4u << 20)) {
            int ids[4] = {1, 2 % c->vocab_size, 3 % c->vocab_size, 0};
            double nll;
            long count;
            if (student_eval_nll(&s, ids, 4, 4, &nll, &count, NULL) != 0) fuzz_rejected("student_eval_nll");
        }
        student_free(&s);
    } else {
        fuzz_rejected("student_load");
    }
    gf_clear_error();
    return 0;
}
