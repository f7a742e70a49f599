// Marian's word vocabularies, read as YAML (.yml) and as a word a line (.txt): load, then encode
// and decode with it, also cut to fewer entries (--dim-vocabs).
#include "data/vocab.h"
#include "fuzz_common.h"

using namespace marian;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for(const char* name : {"vocab.yml", "vocab.txt"}) {
    std::string path = fuzz::writeFile(name, data, size);
    fuzz::errorsAllowed([&] {
      std::shared_ptr<Vocab> v = loadOrCreateVocab(path, {}, 0);
      FUZZ_CHECK(v->size() >= 2);
      std::vector<int> ids = v->encode("a b </s> <unk> the , . zzz");
      FUZZ_CHECK(ids.back() == v->eosId());
      for(int id : ids)
        FUZZ_CHECK(id >= 0 && size_t(id) < v->size());
      v->decode(ids);
      std::vector<int> all;
      for(size_t i = 0; i < v->size() && i < 1000; ++i)
        all.push_back(int(i));
      all.push_back(int(v->size()) + 5);  // out of range: decoded as <unk>
      v->decode(all);
      std::shared_ptr<Vocab> cut = loadOrCreateVocab(path, {}, 3);
      for(int id : cut->encode(v->decode(all)))
        FUZZ_CHECK(id >= 0 && size_t(id) < cut->size());
    });
  }
  return 0;
}
