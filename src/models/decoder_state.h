#pragma once
// defines: marian::DecoderState — what a model keeps between the steps of incremental decoding
// (encoder states, attention keys and values, recurrent states): named float tensors in device
// memory that outlives each step's graph. A model reads them as graph leaves (get) and gives their
// next values (set). A value's first axis is either the row (one hypothesis: after the step's
// forward, beam search keeps the rows the surviving hypotheses continue, keepRows, on the device)
// or the source sentence (setPerSentence: encoder states and their keys and values, kept once per
// sentence for the whole batch, however many hypotheses read them).
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/expression_graph.h"
#include "tensors/arena.h"

namespace marian {

class DecoderState {
public:
  explicit DecoderState(Device device);
  ~DecoderState();

  // A leaf of g over the tensor kept under `name` (an error naming it when there is none).
  Expr get(ExpressionGraph& g, const std::string& name) const;
  // The number of rows of the kept tensors (0 before the first keepRows).
  int rows() const { return rows_; }
  // After this step's forward, `name` holds the value of x (first axis: the rows of this step).
  void set(const std::string& name, Expr x);
  // After this step's forward, `name` holds the value of x (first axis: the sentences of the
  // batch) until clear(): keepRows leaves it as it is.
  void setPerSentence(const std::string& name, Expr x);
  // The values set in this step: what an inference forward must keep for keepRows.
  std::vector<Expr> pendingValues() const;
  // Call after forward: every per-row tensor becomes the rows `rows` of its value (the one set in
  // this step, or the one kept before), in that order; a row may repeat (beams that share a parent).
  void keepRows(const std::vector<int>& rows);
  // Drops every tensor (a new batch of sources); their memory is kept for the next batch.
  void clear();
  // The bytes of device memory the state holds (kept tensors and buffers kept for reuse).
  size_t bytes() const;

private:
  struct Kept {
    Shape shape;                         // its first axis: the rows, or the sentences
    bool perSentence = false;
    std::unique_ptr<FlatBuffer> buffer;  // capacity >= shape.elements()
    std::unique_ptr<FlatBuffer> spare;   // the gather target when the value is its own source
  };
  struct Pending {
    std::string name;
    Expr value;
    bool perSentence;
  };
  // buffer holds at least `elements` floats afterwards: itself, a pooled one, or a new one (one
  // it outgrew is freed, not pooled: a value one position longer each step would otherwise leave
  // a trail of ever smaller buffers)
  void reserve(std::unique_ptr<FlatBuffer>& buffer, size_t elements);

  Device device_;
  std::map<std::string, Kept> kept_;
  std::vector<Pending> pending_;
  std::vector<std::unique_ptr<FlatBuffer>> pool_;  // buffers of the last batch, for reuse
  std::unique_ptr<FlatBuffer> indices_;  // int32 row indices on the device
  int rows_ = 0;
};

}  // namespace marian
