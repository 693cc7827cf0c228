// jemalloc's options, read when it starts (before main): back its memory with transparent huge
// pages (madvise(MADV_HUGEPAGE); the kernel honours it in its `madvise` and `always` THP modes).
// A replay of 65,536 GPUs touches about 130 MiB, and its event loop's state alone (over 20 MiB)
// spans thousands of 4-KiB pages, far past the TLB's reach; with 2 MiB pages one round of
// `bench_replay 1 scaling 65536-gpu` takes 1,435 page faults instead of 37,934, and the replays
// of 16,384 to 65,536 GPUs run 20-44% faster (BENCHMARKS.md, 2026-12-06). A MALLOC_CONF
// environment variable, read after this, still overrides it.
extern "C" {
const char* malloc_conf = "thp:always,metadata_thp:auto";
}
