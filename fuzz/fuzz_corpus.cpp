// Parallel corpora, plain and gzip-compressed: the first byte picks how the files are written
// (0: plain text; 1: gzip-compressed by us, a valid .gz of the text; 2: the bytes as a .gz file
// as they are, corrupt or not; 3: compressed, then cut), the second the maximum length (1 + it), the
// third whether long sentences are cropped; the rest is the source side, then after the first
// NUL byte the target side (the source again when there is none). The same files are read as
// streamed chunks (CorpusChunks, chunks of 1 + the third byte / 2 % 8 lines), and the source as
// a TSV file: every chunk read gives the lines readLines gives, or a named error.
#include <zlib.h>

#include "data/corpus.h"
#include "data/corpus_chunks.h"
#include "data/text_file.h"
#include "fuzz_common.h"

using namespace marian;

namespace {

std::string gzipped(const std::string& text) {
  std::string out(compressBound(uLong(text.size())) + 64, '\0');
  z_stream zs{};
  deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);  // + 16: a gzip wrapper
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = uInt(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(&out[0]);
  zs.avail_out = uInt(out.size());
  FUZZ_CHECK(deflate(&zs, Z_FINISH) == Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

std::shared_ptr<Vocab> vocab() {
  static std::shared_ptr<Vocab> v = [] {
    std::string path = fuzz::writeFile("vocab.yml", "</s>: 0\n<unk>: 1\na: 2\nb: 3\nc: 4\nthe: 5\n\"\\u00e9t\\u00e9\": 6\n");
    return loadOrCreateVocab(path, {}, 0);
  }();
  return v;
}

std::string side(const std::string& name, const std::string& text, int mode) {
  switch(mode) {
    case 0:
      return fuzz::writeFile(name + ".txt", text);
    case 1:
      return fuzz::writeFile(name + ".txt.gz", gzipped(text));
    case 2:
      return fuzz::writeFile(name + ".txt.gz", text);
    default: {
      std::string gz = gzipped(text);
      return fuzz::writeFile(name + ".txt.gz", gz.substr(0, gz.size() * 2 / 3));
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if(size < 3)
    return 0;
  int mode = data[0] % 4;
  size_t maxLength = 1 + size_t(data[1]);  // --max-length is at least 1
  bool crop = data[2] & 1;
  std::string rest(reinterpret_cast<const char*>(data) + 3, size - 3);
  size_t nul = rest.find('\0');
  std::string src = rest.substr(0, nul), trg = nul == std::string::npos ? rest : rest.substr(nul + 1);
  std::string srcPath = side("src", src, mode), trgPath = side("trg", trg, mode);
  fuzz::errorsAllowed([&] {
    std::vector<std::string> lines = readLines(srcPath, "Corpus file");
    if(mode < 2) {  // what was written comes back, line by line
      std::string joined;
      for(const std::string& l : lines)
        joined += l + "\n";
      std::string expected;
      for(size_t b = 0; b < src.size();) {
        size_t e = src.find('\n', b);
        std::string l = src.substr(b, e == std::string::npos ? std::string::npos : e - b);
        if(!l.empty() && l.back() == '\r')
          l.pop_back();
        if(e != std::string::npos || !l.empty())  // a last line without '\n' only if it has text
          expected += l + "\n";
        b = e == std::string::npos ? src.size() : e + 1;
      }
      FUZZ_CHECK(joined == expected);
    }
  });
  fuzz::errorsAllowed([&] {
    Corpus corpus({srcPath, trgPath}, {vocab(), vocab()}, maxLength, crop);
    for(size_t i = 0; i < corpus.size(); ++i) {
      PairView p = corpus[i];
      for(const IdSpan& s : {p.src, p.trg}) {
        FUZZ_CHECK(s.size() >= 2 && s.back() == Vocab::kEos && s.size() - 1 <= maxLength);
        for(int id : s)
          FUZZ_CHECK(id >= 0 && size_t(id) < vocab()->size());
      }
    }
  });
  size_t chunkLines = 1 + size_t(data[2] >> 1) % 8;
  fuzz::errorsAllowed([&] {
    std::vector<std::string> src = readLines(srcPath, "Corpus file"), trg = readLines(trgPath, "Corpus file");
    CorpusChunks chunks({srcPath, trgPath}, false, chunkLines, fuzz::folder());
    FUZZ_CHECK(chunks.lines() == src.size() && src.size() == trg.size());
    for(size_t c = 0; c < chunks.chunks(); ++c)
      fuzz::errorsAllowed([&] {  // a line that is not UTF-8 fails its chunk alone
        for(const RawPair& r : chunks.read(c))
          FUZZ_CHECK(r.line < src.size() && r.src == src[r.line] && r.trg == trg[r.line]);
      });
  });
  fuzz::errorsAllowed([&] {
    CorpusChunks tsv({srcPath}, true, chunkLines, "");
    for(size_t c = 0; c < tsv.chunks(); ++c)
      fuzz::errorsAllowed([&] {
        for(const RawPair& r : tsv.read(c))
          FUZZ_CHECK(r.src.find('\t') == std::string::npos && r.trg.find('\t') == std::string::npos);
      });
  });
  return 0;
}
