// jemalloc's settings for mlsim's programs (compiled into each program that links jemalloc, see
// CMakeLists.txt; jemalloc reads this symbol at start-up).
//
// Decay off: jemalloc otherwise returns freed pages to the kernel after ~10 s and faults them in again
// on the next allocation. The real loaders that `mlsim calibrate` and `mlsim validate` run allocate a
// batch buffer (MBs) per batch: with decay, their collate cost in the loader measured ~100x its cost in
// isolation (page faults), which glibc's allocator, reusing the freed block, does not show; with decay
// off it reuses it too. A simulation frees and allocates small objects at every event and gains nothing
// from giving pages back before it exits.
extern "C" {
extern const char* malloc_conf;
const char* malloc_conf = "dirty_decay_ms:-1,muzzy_decay_ms:-1";
}
