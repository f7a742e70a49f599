#pragma once
// defines: e2e::timelineSpans, e2e::timelineMarks — the spans of a --timeline trace with their
// thread's name, and its instants, for tests of what ran on which thread and in which order: facts
// that hold however the threads were scheduled, unlike the share of overlap, which a starved
// thread on a busy machine can make 0.
#include <algorithm>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "e2e_helpers.h"

namespace e2e {

struct Span {
  std::string name, thread;
  double start, end;  // microseconds
};

// The complete ("X") spans of a trace as common/timeline.cpp writes it (one event a line), in
// order of their start.
inline std::vector<Span> timelineSpans(const std::string& path) {
  std::string text = readFile(path);
  std::regex threadName("\\{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": \\d+, \"tid\": (\\d+), "
                        "\"args\": \\{\"name\": \"([^\"]*)\"\\}\\}");
  std::regex span("\\{\"name\": \"([^\"]*)\", \"cat\": \"[^\"]*\", \"ph\": \"X\", \"pid\": \\d+, \"tid\": (\\d+), "
                  "\"ts\": ([0-9.]+), \"dur\": ([0-9.]+)\\}");
  std::vector<std::pair<std::string, std::string>> names;  // tid, name
  for(std::sregex_iterator it(text.begin(), text.end(), threadName), end; it != end; ++it)
    names.push_back({(*it)[1], (*it)[2]});
  std::vector<Span> spans;
  for(std::sregex_iterator it(text.begin(), text.end(), span), end; it != end; ++it) {
    std::string thread = "tid " + (*it)[2].str();
    for(const auto& n : names)
      if(n.first == (*it)[2])
        thread = n.second;
    double start = std::stod((*it)[3]);
    spans.push_back({(*it)[1], thread, start, start + std::stod((*it)[4])});
  }
  std::stable_sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
  return spans;
}

struct Mark {
  std::string name, text;
  double at;  // microseconds
};

// The instants ("i") of a trace, in order of time.
inline std::vector<Mark> timelineMarks(const std::string& path) {
  std::string text = readFile(path);
  std::regex instant("\\{\"name\": \"([^\"]*)\", \"ph\": \"i\", \"pid\": \\d+, \"tid\": \\d+, \"ts\": ([0-9.]+), "
                     "\"s\": \"p\", \"args\": \\{\"text\": \"([^\"]*)\"\\}\\}");
  std::vector<Mark> marks;
  for(std::sregex_iterator it(text.begin(), text.end(), instant), end; it != end; ++it)
    marks.push_back({(*it)[1], (*it)[3], std::stod((*it)[2])});
  std::stable_sort(marks.begin(), marks.end(), [](const Mark& a, const Mark& b) { return a.at < b.at; });
  return marks;
}

inline std::vector<Span> spansNamed(const std::vector<Span>& spans, const std::string& name) {
  std::vector<Span> out;
  for(const Span& s : spans)
    if(s.name == name)
      out.push_back(s);
  return out;
}

inline std::set<std::string> threadsOf(const std::vector<Span>& spans) {
  std::set<std::string> out;
  for(const Span& s : spans)
    out.insert(s.thread);
  return out;
}

}  // namespace e2e
