#include "data/tokenizer.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include "core/error.hpp"

namespace troupe::data {
namespace {

bool is_space(unsigned char c) {
  return std::isspace(c) != 0;
}
// Only ASCII punctuation: bytes >= 0x80 belong to multi-byte UTF-8 letters and stay in words.
bool is_punct(unsigned char c) {
  return c < 0x80 && std::ispunct(c) != 0;
}

const std::string pad_token = "<pad>";
const std::string unk_token = "<unk>";

}  // namespace

std::vector<std::string> tokenizer::split(const std::string& text) {
  std::vector<std::string> out;
  std::string word;
  const auto flush = [&] {
    if (!word.empty()) out.push_back(std::move(word));
    word.clear();
  };
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (is_space(c)) {
      flush();
    } else if (is_punct(c)) {
      flush();
      out.emplace_back(1, ch);
    } else {
      word.push_back(c < 0x80 ? static_cast<char>(std::tolower(c)) : ch);
    }
  }
  flush();
  return out;
}

tokenizer tokenizer::build(const std::vector<std::string>& texts, std::size_t min_freq,
                           std::size_t max_vocab) {
  if (max_vocab != 0 && max_vocab < 2) {
    throw input_error("tokenizer: max_vocab must be 0 (unlimited) or at least 2");
  }
  std::map<std::string, std::size_t> freq;
  for (const auto& t : texts)
    for (auto& w : split(t)) ++freq[w];
  std::vector<std::pair<std::string, std::size_t>> ranked;
  for (auto& [w, f] : freq) {
    if (f >= std::max<std::size_t>(min_freq, 1) && w != pad_token && w != unk_token)
      ranked.emplace_back(w, f);
  }
  // std::map iteration already sorted by token, so a stable sort by frequency breaks ties by it.
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  tokenizer tok;
  tok.tokens_ = {pad_token, unk_token};
  for (auto& [w, f] : ranked) {
    if (max_vocab != 0 && tok.tokens_.size() >= max_vocab) break;
    tok.tokens_.push_back(w);
  }
  for (std::size_t i = 0; i < tok.tokens_.size(); ++i) {
    tok.ids_.emplace(tok.tokens_[i], static_cast<std::int32_t>(i));
  }
  return tok;
}

std::int32_t tokenizer::id(const std::string& token) const {
  const auto it = ids_.find(token);
  return it == ids_.end() ? unk_id : it->second;
}

const std::string& tokenizer::token(std::int32_t id) const {
  return id >= 0 && static_cast<std::size_t>(id) < tokens_.size()
             ? tokens_[static_cast<std::size_t>(id)]
             : unk_token;
}

std::vector<std::int32_t> tokenizer::encode(const std::string& text) const {
  std::vector<std::int32_t> out;
  for (const auto& w : split(text)) out.push_back(id(w));
  return out;
}

std::vector<std::int32_t> tokenizer::encode(const std::string& text, std::size_t length) const {
  auto ids = encode(text);
  ids.resize(length, pad_id);
  return ids;
}

std::string tokenizer::decode(const std::vector<std::int32_t>& ids) const {
  std::string out;
  for (const auto i : ids) {
    if (i == pad_id) continue;
    if (!out.empty()) out.push_back(' ');
    out += token(i);
  }
  return out;
}

dataset make_text_dataset(const tokenizer& tok, const std::vector<std::string>& texts,
                          const std::vector<std::int32_t>& labels, std::size_t length,
                          const std::string& name) {
  if (length == 0) throw input_error("text dataset " + name + ": length must be positive");
  if (!labels.empty() && labels.size() != texts.size()) {
    throw input_error("text dataset " + name + ": " + std::to_string(texts.size()) + " texts but " +
                      std::to_string(labels.size()) + " labels");
  }
  dataset d;
  d.name = name;
  d.n = texts.size();
  d.sample_shape = {length};
  d.x.reserve(d.n * length);
  for (const auto& t : texts)
    for (const auto i : tok.encode(t, length)) d.x.push_back(static_cast<float>(i));
  d.labels = labels;
  for (const auto l : labels) {
    if (l < 0) throw input_error("text dataset " + name + ": negative label");
    d.classes = std::max(d.classes, static_cast<std::size_t>(l) + 1);
  }
  return d;
}

}  // namespace troupe::data
