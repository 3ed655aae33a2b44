/* The files beside a student's weights that let Hugging Face transformers load
 * it (docs/student-format.md, "Continue in PyTorch"):
 *   modeling_graft_student.py   the model class (trust_remote_code), embedded
 *                               in graft from assets/export/
 *   tokenizer.json              written from graft's tokenizer when the teacher
 *                               had none (llama2.c tokenizer.bin, GGUF metadata)
 *   tokenizer_config.json       copied from beside the teacher's tokenizer.json,
 *                               else written (special tokens, BOS rule)
 * plus the config.json keys transformers reads (model_type, auto_map,
 * architectures). student_save calls these; every file is an atomic_file
 * (core/atomic_file.h) finished before student_save renames any. */
#ifndef GRAFT_STUDENT_STUDENT_EXPORT_H
#define GRAFT_STUDENT_STUDENT_EXPORT_H

#include <cjson/cJSON.h>

#include "core/atomic_file.h"
#include "student/student.h"

#define STUDENT_EXPORT_MAX_FILES 8

typedef struct {
    atomic_file files[STUDENT_EXPORT_MAX_FILES]; /* finished, not yet renamed into place */
    int n;
    char *tokenizer_json;  /* "tokenizer.json" when this export writes one, else NULL */
    char *tokenizer_note;  /* why no tokenizer.json could be written, else NULL */
} student_export;

/* Writes the export files of student s into dir (finished temporary files,
 * not yet in place; x is zeroed first, and must be freed). tokenizer_src is
 * the teacher tokenizer file student_save copies (NULL: none). A tokenizer that
 * has no faithful tokenizer.json is not an error: tokenizer_note says why. */
int student_export_write_tmp(student_export *x, const student *s, const char *dir, const char *tokenizer_src);

/* Adds model_type, architectures, auto_map and graft_student.teacher_model_type
 * (and the note, if any) to a student's config.json object. */
void student_export_config(cJSON *cfg, const student *s, const student_export *x);

/* Renames every file into place / removes them. */
int student_export_commit(student_export *x);
void student_export_abort(student_export *x);
void student_export_free(student_export *x);

/* The modeling file's text (NUL-terminated) and length. */
const char *student_export_modeling_py(size_t *len);

#endif
