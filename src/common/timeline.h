#pragma once
// defines: marian::timeline — spans of work per thread (forward, backward, sync, update, send,
// receive, server update) recorded with --timeline FILE and written as a Chrome trace that
// chrome://tracing or ui.perfetto.dev shows: one row per thread, so one sees whether
// communication really overlaps computation. Off by default; a disabled span costs one load.
#include <string>

namespace marian {
namespace timeline {

// Starts recording; write() puts the trace at `path` (ranks above 0: PATH with .rankN before
// the extension), with `rank` as the process id, and stops recording.
void start(const std::string& path, int rank);
bool enabled();
// The row name of the calling thread ("client 0 compute", "server", ...).
void nameThisThread(const std::string& name);
void write();
// A value over time (a counter row of the process: a link's round trip); an instant marked
// with a text (a slow rank named).
void counter(const std::string& name, double value);
void instant(const std::string& name, const std::string& text);

// A span from construction to destruction on the calling thread. name and category must be
// string literals (they are kept by pointer).
class Span {
public:
  Span(const char* name, const char* category);
  ~Span();
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;

private:
  const char *name_, *category_;
  double start_;
};

}  // namespace timeline
}  // namespace marian
