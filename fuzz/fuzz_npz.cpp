// .npz model files and checkpoints: readNpz, and readCheckpoint (the same container with its
// special:state.yml). What reads must write and read back the same. (CRCs are not enforced in
// the fuzz build, so that mutated arrays reach the .npy parser.)
#include "common/npz.h"
#include "fuzz_common.h"
#include "training/loop/checkpoint.h"

using namespace marian;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string path = fuzz::writeFile("input.npz", data, size);
  fuzz::errorsAllowed([&] {
    std::vector<NpzItem> items = readNpz(path);
    for(const NpzItem& item : items)
      FUZZ_CHECK(item.bytes.size() == item.elements() * item.itemSize());
    std::string copy = fuzz::folder() + "/copy.npz";
    writeNpz(copy, items);
    std::vector<NpzItem> again = readNpz(copy);
    FUZZ_CHECK(again.size() == items.size());
    for(size_t i = 0; i < items.size(); ++i)
      FUZZ_CHECK(again[i].shape == items[i].shape && again[i].descr == items[i].descr &&
                 again[i].bytes == items[i].bytes);
  });
  fuzz::errorsAllowed([&] { readCheckpoint(path); });
  return 0;
}
