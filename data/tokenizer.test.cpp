#include "data/tokenizer.hpp"

#include <doctest/doctest.h>

#include "core/error.hpp"

using namespace troupe::data;

TEST_CASE("split lower-cases, separates punctuation, keeps UTF-8 words whole") {
  CHECK(tokenizer::split("Hello, World!  It's\tfine.") ==
        std::vector<std::string>{"hello", ",", "world", "!", "it", "'", "s", "fine", "."});
  CHECK(tokenizer::split("  ") == std::vector<std::string>{});
  CHECK(tokenizer::split("Café au lait") == std::vector<std::string>{"café", "au", "lait"});
}

TEST_CASE("vocabulary: frequency order, min_freq, max_vocab, special ids") {
  const std::vector<std::string> corpus = {"the cat sat", "the dog sat", "The cat ran!"};
  const auto tok = tokenizer::build(corpus, 2);
  // the x3, cat x2, sat x2 (tie broken by byte order); dog, ran, ! appear once.
  CHECK(tok.size() == 5);
  CHECK(tok.token(tokenizer::pad_id) == "<pad>");
  CHECK(tok.token(tokenizer::unk_id) == "<unk>");
  CHECK(tok.id("the") == 2);
  CHECK(tok.id("cat") == 3);
  CHECK(tok.id("sat") == 4);
  CHECK(tok.id("dog") == tokenizer::unk_id);

  CHECK(tokenizer::build(corpus, 1).size() == 2 + 6);
  CHECK(tokenizer::build(corpus, 1, 3).size() == 3);
  CHECK_THROWS_AS(tokenizer::build(corpus, 1, 1), troupe::input_error);
}

TEST_CASE("encode/decode round trip, unknown words, fixed length") {
  const auto tok = tokenizer::build({"a quick brown fox jumps over the lazy dog ."});
  const std::string text = "The quick, brown fox.";
  const auto ids = tok.encode(text);
  CHECK(ids.size() == 6);
  CHECK(ids[2] == tokenizer::unk_id);  // "," never seen
  CHECK(tok.decode(ids) == "the quick <unk> brown fox .");
  // Known-only text round-trips exactly to its normalised token stream.
  const std::string known = "Lazy DOG jumps over a fox";
  CHECK(tok.decode(tok.encode(known)) == "lazy dog jumps over a fox");

  const auto padded = tok.encode("the fox", 5);
  CHECK(padded.size() == 5);
  CHECK(padded[2] == tokenizer::pad_id);
  CHECK(padded[4] == tokenizer::pad_id);
  CHECK(tok.decode(padded) == "the fox");
  const auto cut = tok.encode(known, 2);
  CHECK(tok.decode(cut) == "lazy dog");
  CHECK(tok.token(9999) == "<unk>");
}

TEST_CASE("text dataset holds ids as floats with labels") {
  const std::vector<std::string> texts = {"good movie", "bad movie , bad"};
  const auto tok = tokenizer::build(texts);
  const dataset d = make_text_dataset(tok, texts, {1, 0}, 3, "reviews");
  CHECK(d.n == 2);
  CHECK(d.sample_shape == std::vector<std::size_t>{3});
  CHECK(d.classes == 2);
  CHECK(d.x[0] == static_cast<float>(tok.id("good")));
  CHECK(d.x[2] == static_cast<float>(tokenizer::pad_id));
  CHECK(d.x[3] == static_cast<float>(tok.id("bad")));
  CHECK_THROWS_AS(make_text_dataset(tok, texts, {1}, 3, "reviews"), troupe::input_error);
}
