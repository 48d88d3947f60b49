#pragma once
// A word-level text tokenizer. Text is lower-cased (ASCII), split on whitespace, and every
// punctuation character becomes a token of its own; runs of other characters (letters, digits,
// UTF-8 bytes) are words. Ids: 0 = <pad>, 1 = <unk>, then the vocabulary by descending frequency,
// ties in byte order, so the same corpus always yields the same ids.
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "data/dataset.hpp"

namespace troupe::data {

class tokenizer {
 public:
  static constexpr std::int32_t pad_id = 0;
  static constexpr std::int32_t unk_id = 1;

  // Keeps tokens seen at least `min_freq` times; `max_vocab` (0 = unlimited) caps the total size
  // including <pad> and <unk>.
  static tokenizer build(const std::vector<std::string>& texts, std::size_t min_freq = 1,
                         std::size_t max_vocab = 0);

  static std::vector<std::string> split(const std::string& text);

  std::vector<std::int32_t> encode(const std::string& text) const;
  // Exactly `length` ids: truncated at the end, or padded with <pad>.
  std::vector<std::int32_t> encode(const std::string& text, std::size_t length) const;
  // Tokens joined by single spaces; <pad> is dropped, unknown ids and <unk> print as "<unk>".
  std::string decode(const std::vector<std::int32_t>& ids) const;

  std::int32_t id(const std::string& token) const;
  const std::string& token(std::int32_t id) const;
  std::size_t size() const { return tokens_.size(); }

 private:
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, std::int32_t> ids_;
};

// One sample per text: sample_shape {length}, x = token ids as floats. `labels` may be empty
// (no classes) or hold one class id per text.
dataset make_text_dataset(const tokenizer& tok, const std::vector<std::string>& texts,
                          const std::vector<std::int32_t>& labels, std::size_t length,
                          const std::string& name);

}  // namespace troupe::data
