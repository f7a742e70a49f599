#include "training/validation/validation_script.h"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "common/error.h"

namespace marian {

double runValidationScript(const std::string& command, const std::vector<std::string>& args,
                           const std::string& file) {
  std::string line = command;
  for(const std::string& a : args)
    line += " " + a;
  if(!file.empty())
    line += " " + file;
  std::FILE* pipe = popen(line.c_str(), "r");
  ABORT_IF(!pipe, "Cannot run the validation script '{}' (--valid-script-path)", line);
  std::string output;
  char buffer[4096];
  for(size_t n; (n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0;)
    output.append(buffer, n);
  int status = pclose(pipe);
  bool ok = status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  ABORT_IF(!ok, "The validation script '{}' (--valid-script-path) failed ({}); its output: {}", line,
           status != -1 && WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status)) : "killed",
           output.empty() ? "(none)" : output);
  std::string last;
  std::istringstream lines(output);
  for(std::string l; std::getline(lines, l);)
    if(l.find_first_not_of(" \t\r") != std::string::npos)
      last = l;
  const char* text = last.c_str();
  char* end = nullptr;
  double score = std::strtod(text, &end);
  while(end && (*end == ' ' || *end == '\t' || *end == '\r'))
    ++end;
  ABORT_IF(last.empty() || end == text || *end != '\0',
           "The validation script '{}' (--valid-script-path) must print its score as a number on its last line; it "
           "printed: {}",
           line, output.empty() ? "(nothing)" : output);
  return score;
}

}  // namespace marian
