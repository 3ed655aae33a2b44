/* First in both emulations' host C++ builds (tests/gpu/gdn.mk forces it,
 * tests/gpu/core_emu/core_emu.h includes it first): engine/model/config.h names
 * struct members after their types (`rope_pairing rope_pairing;`), valid C that
 * g++ refuses; backend.h needs only rope_pairing from it. nvcc accepts the real
 * header, so only the emulation uses this. */
#ifndef GRAFT_MODEL_CONFIG_H
#define GRAFT_MODEL_CONFIG_H
typedef enum { ROPE_HALF = 0, ROPE_ADJACENT = 1 } rope_pairing;
#endif
