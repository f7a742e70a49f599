#include "common/timeline.h"

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "common/file_util.h"
#include "common/logging.h"

namespace marian {
namespace timeline {

namespace {

struct Event {
  const char *name, *category;
  int thread;
  double start, duration;  // microseconds since start()
};

struct Mark {  // a counter's value, or an instant's text
  std::string name, text;
  double value, at;
  int thread;
  bool isCounter;
};

struct Recorder {
  std::atomic<bool> on{false};
  std::mutex mutex;
  std::string path;
  int rank = 0;
  std::chrono::steady_clock::time_point zero;
  std::map<std::thread::id, int> threads;
  std::map<int, std::string> names;
  std::vector<Event> events;
  std::vector<Mark> marks;

  int threadIndex() {  // under mutex
    auto [it, added] = threads.emplace(std::this_thread::get_id(), int(threads.size()));
    if(added && !names.count(it->second))
      names[it->second] = "thread " + std::to_string(it->second);
    return it->second;
  }
};

// Never destroyed: threads that outlive main (the heartbeats of MPI's shutdown) may still record.
Recorder& recorder() {
  static Recorder* r = new Recorder;
  return *r;
}

double now() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - recorder().zero).count();
}

std::string escape(const std::string& s) {
  std::string out;
  for(char c : s)
    out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return out;
}

}  // namespace

void start(const std::string& path, int rank) {
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.path = path;
  r.rank = rank;
  if(rank > 0) {
    size_t dot = path.rfind('.');
    size_t slash = path.rfind('/');
    std::string suffix = ".rank" + std::to_string(rank);
    r.path = dot != std::string::npos && (slash == std::string::npos || dot > slash)
                 ? path.substr(0, dot) + suffix + path.substr(dot)
                 : path + suffix;
  }
  r.zero = std::chrono::steady_clock::now();
  r.on = true;
}

bool enabled() { return recorder().on.load(std::memory_order_relaxed); }

void nameThisThread(const std::string& name) {
  Recorder& r = recorder();
  if(!enabled())
    return;
  std::lock_guard<std::mutex> lock(r.mutex);
  r.names[r.threadIndex()] = name;
}

void write() {
  Recorder& r = recorder();
  if(!enabled())
    return;
  std::lock_guard<std::mutex> lock(r.mutex);
  std::ostringstream out;
  out << "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  out << "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": " << r.rank << ", \"args\": {\"name\": \"rank "
      << r.rank << "\"}}";
  for(const auto& [tid, name] : r.names)
    out << ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": " << r.rank << ", \"tid\": " << tid
        << ", \"args\": {\"name\": \"" << escape(name) << "\"}}";
  for(const Event& e : r.events)
    out << ",\n{\"name\": \"" << e.name << "\", \"cat\": \"" << e.category << "\", \"ph\": \"X\", \"pid\": " << r.rank
        << ", \"tid\": " << e.thread << ", \"ts\": " << std::fixed << e.start << ", \"dur\": " << e.duration << "}";
  for(const Mark& m : r.marks) {
    out << ",\n{\"name\": \"" << escape(m.name) << "\", \"ph\": \"" << (m.isCounter ? "C" : "i") << "\", \"pid\": "
        << r.rank << ", \"tid\": " << m.thread << ", \"ts\": " << std::fixed << m.at << ", ";
    if(m.isCounter)
      out << "\"args\": {\"ms\": " << m.value << "}}";
    else
      out << "\"s\": \"p\", \"args\": {\"text\": \"" << escape(m.text) << "\"}}";
  }
  out << "\n]}\n";
  writeFileAtomic(r.path, out.str());
  r.on = false;  // what comes after is in no file
  LOG(info, "[timeline] {} spans and {} marks written to {}", r.events.size(), r.marks.size(), r.path);
}

void counter(const std::string& name, double value) {
  if(!enabled())
    return;
  Recorder& r = recorder();
  double at = now();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.marks.push_back({name, "", value, at, r.threadIndex(), true});
}

void instant(const std::string& name, const std::string& text) {
  if(!enabled())
    return;
  Recorder& r = recorder();
  double at = now();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.marks.push_back({name, text, 0, at, r.threadIndex(), false});
}

Span::Span(const char* name, const char* category)
    : name_(name), category_(category), start_(enabled() ? now() : -1.0) {}

Span::~Span() {
  if(start_ < 0)
    return;
  double end = now();
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.events.push_back({name_, category_, r.threadIndex(), start_, end - start_});
}

}  // namespace timeline
}  // namespace marian
