#pragma once
// IDX files (the MNIST / Fashion-MNIST container), gzip-compressed or plain: zlib's gzread reads
// both transparently, so the caller never says which. Every failure is a troupe::input_error that
// names the file.
#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset.hpp"

namespace troupe::data {

// Images as a dataset without labels: sample_shape {1, rows, cols}, pixels scaled to [0, 1].
// The file must hold unsigned bytes with 3 dimensions (magic 0x00000803).
dataset read_idx_images(const std::string& path);

// Labels as unsigned bytes with 1 dimension (magic 0x00000801).
std::vector<std::int32_t> read_idx_labels(const std::string& path);

// An image file and its label file joined; classes = max label + 1.
dataset load_idx_pair(const std::string& images_path, const std::string& labels_path,
                      const std::string& name);

// The file `name` of an IDX directory as core/idx_files.hpp finds it (NAME.gz, else NAME; the
// config check asks the same), else NAME.gz, so an error names what was looked for first.
std::string idx_file_in(const std::string& dir, const std::string& name);

// The four files of Fashion-MNIST (as the Debian package dataset-fashion-mnist installs them,
// gzip-compressed, or plain).
train_test load_fashion_mnist(const std::string& dir = "/usr/share/datasets/fashion-mnist");

// Writers, so tests and tools can produce IDX files; gzip when `gzip` is true.
void write_idx_images(const std::string& path, std::size_t n, std::size_t rows, std::size_t cols,
                      const std::vector<std::uint8_t>& pixels, bool gzip);
void write_idx_labels(const std::string& path, const std::vector<std::uint8_t>& labels, bool gzip);

}  // namespace troupe::data
