/* Student folders (docs/student-format.md):
 *   config.json        the teacher's Hugging Face config plus "graft_student"
 *                      (GDN layers and every GDN setting)
 *   model.safetensors  float32; the teacher's tensors under HF names (llama2.c
 *                      q/k rows permuted to HF's half-split RoPE layout) plus
 *                      model.layers.{i}.linear_attn.* for GDN layers
 *   report.json        every statistic and curve (student_report_json)
 *   tokenizer.json / tokenizer.bin   a copy of the teacher's tokenizer
 * Every file is written to a temporary sibling first (core/atomic_file.h);
 * the renames happen only after all of them are complete and fsync'd, so a
 * failure leaves an existing folder as it was. */
#ifndef GRAFT_STUDENT_STUDENT_IO_H
#define GRAFT_STUDENT_STUDENT_IO_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "student/student.h"

/* Saves the layers in s->is_gdn. tokenizer_src: file to copy (NULL: none).
 * report: the report.json object (not consumed; may be NULL). */
int student_save(const student *s, const char *dir, const char *tokenizer_src, const cJSON *report);
/* The same, with config_extra's members (may be NULL) added to config.json
 * (the request that made the student: src/method/artifact.h). */
int student_save_with(const student *s, const char *dir, const char *tokenizer_src, const cJSON *report,
                      const cJSON *config_extra);

/* 1 when path is a folder whose config.json has a "graft_student" section. */
bool student_folder_detect(const char *path);

/* Loads a student folder (teacher part through the HF folder loader). The
 * student owns its model. tokenizer_override may be NULL. */
int student_load(student *s, const char *dir, const char *tokenizer_override);
/* The same with the teacher part's load options (its backend; o->tokenizer_path
 * is the override) and hooks (NULL: none). */
int student_load_with(student *s, const char *dir, const model_load_opts *o, const model_load_hooks *hooks);
/* What a student folder's config.json says, nothing else read: how many
 * layers are GDN and the settings (for estimates before loading). */
int student_folder_peek(const char *dir, int *n_gdn, student_settings *set);

/* The teacher's tokenizer file: override, else DIR/tokenizer.json for a folder,
 * else tokenizer.bin / tok<V>.bin beside a llama2.c checkpoint. NULL if none. */
char *teacher_tokenizer_path(const char *teacher_path, int vocab, const char *override);

/* The config.json object of a student (teacher config + graft_student). */
cJSON *student_config_json(const student *s);

#endif
