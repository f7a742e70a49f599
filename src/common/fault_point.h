#pragma once
// defines: marian::faultPoint — named points where a test makes one rank fail as a cluster does:
// MARIAN_FAULT=WHAT@POINT[:RANK] (RANK: all when left out), on reaching POINT (start, update-N
// and save-N at update N, end, server: a parameter server's message) the first time: WHAT = STOP
// or KILL sends this process SIGSTOP or SIGKILL; BUSY<seconds> keeps it busy that long (a slow
// validation or save); THROW throws an error there (a failed save, a bug). Tests of failing
// ranks need the fault at an exact moment, which a kill from outside cannot hit.
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>

namespace marian {

inline void faultPoint(const std::string& point, int rank) {
  static const char* spec = std::getenv("MARIAN_FAULT");
  thread_local bool fired = false;  // once per thread: ranks that are threads of one process each have theirs
  if(!spec || fired)
    return;
  std::string s = spec;
  size_t at = s.find('@'), colon = s.find(':');
  if(at == std::string::npos || s.substr(at + 1, colon == std::string::npos ? std::string::npos : colon - at - 1) != point)
    return;
  if(colon != std::string::npos && std::atoi(s.c_str() + colon + 1) != rank)
    return;
  fired = true;
  if(s.compare(0, at, "THROW") == 0)
    throw std::runtime_error("injected fault at " + point + " (MARIAN_FAULT)");
  if(s.compare(0, 4, "BUSY") == 0)
    std::this_thread::sleep_for(std::chrono::duration<double>(std::atof(s.c_str() + 4)));
  else
    std::raise(s.compare(0, at, "KILL") == 0 ? SIGKILL : SIGSTOP);
}

}  // namespace marian
