#include "core/cluster_keys.hpp"

#include <doctest/doctest.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>

#include "core/secret.hpp"
#include "core/testing.hpp"

using namespace troupe;

namespace {

unsigned mode_of(const std::filesystem::path& p) {
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return st.st_mode & 0777;
}

}  // namespace

TEST_CASE("the first start makes a CA, a control certificate and a token; the next reuses them") {
  testing::temp_dir dir("troupe-keys");
  const auto state = (dir.path / "state").string();
  const auto a = open_cluster_keys(state, {"10.1.2.3"});
  CHECK(a.created);
  CHECK(mode_of(a.ca_key_path) == 0600);
  CHECK(mode_of(a.control_key_path) == 0600);
  CHECK(mode_of(a.token_path) == 0600);
  CHECK(mode_of(dir.path / "state" / "tls") == 0700);
  const auto token = read_token(state);
  CHECK(token.size() == 64);
  // The token is a secret: nothing Troupe prints shows it.
  CHECK(redact("token=" + token + ".") == "token=[redacted].");

  const auto b = open_cluster_keys(state, {});
  CHECK_FALSE(b.created);
  CHECK(b.ca.cert_pem == a.ca.cert_pem);
  CHECK(read_token(state) == token);
  std::ifstream in(b.control_cert_path);
  const std::string control((std::istreambuf_iterator<char>(in)), {});
  CHECK(
      pki::verify(control, a.ca.cert_pem, pki::role::control).common_name.find("troupe control") ==
      0);

  const auto rotated = rotate_token(state);
  CHECK(rotated != token);
  CHECK(read_token(state) == rotated);

  // Members on this machine find both in the state directory.
  const auto m = find_member_keys("", "", state);
  CHECK(m.token == rotated);
  CHECK(m.ca_path == a.ca_path);
  CHECK(find_member_keys("flag-token-0123456789", "", state).token == "flag-token-0123456789");
}

namespace {

std::vector<std::string> control_names(const cluster_keys& k) {
  std::ifstream in(k.control_cert_path);
  const std::string pem((std::istreambuf_iterator<char>(in)), {});
  return pki::verify(pem, k.ca.cert_pem, pki::role::control).names;
}

bool has(const std::vector<std::string>& names, const std::string& n) {
  return std::find(names.begin(), names.end(), n) != names.end();
}

}  // namespace

TEST_CASE("the control certificate keeps the names of the one it replaces, when it is ours") {
  testing::temp_dir dir("troupe-keys");
  const auto state = (dir.path / "state").string();
  // `troupe serve`: the API's address first, then the agents' port's.
  open_cluster_keys(state, {"api.example", "10.1.2.3"});
  const auto k = open_cluster_keys(state, {"agents.example"});
  auto names = control_names(k);
  CHECK(has(names, "api.example"));
  CHECK(has(names, "10.1.2.3"));
  CHECK(has(names, "agents.example"));
  CHECK(has(names, "127.0.0.1"));  // this host's own addresses are always there
  // `troupe token` keeps them.
  CHECK(has(control_names(open_cluster_keys(state, {})), "api.example"));
  // Each name once.
  names = control_names(open_cluster_keys(state, {"api.example"}));
  CHECK(std::count(names.begin(), names.end(), "api.example") == 1);

  // A certificate of another cluster's CA in its place adds nothing.
  testing::temp_dir other_dir("troupe-keys");
  const auto other = open_cluster_keys((other_dir.path / "state").string(), {"foreign.example"});
  std::filesystem::copy_file(other.control_cert_path, k.control_cert_path,
                             std::filesystem::copy_options::overwrite_existing);
  names = control_names(open_cluster_keys(state, {"agents.example"}));
  CHECK_FALSE(has(names, "foreign.example"));
  CHECK_FALSE(has(names, "api.example"));
  CHECK(has(names, "agents.example"));
  // Nor does a file that is no certificate.
  std::ofstream(k.control_cert_path) << "not a certificate";
  CHECK(has(control_names(open_cluster_keys(state, {"x.example"})), "x.example"));
}

TEST_CASE("a key or token others may read is refused, naming the file and the fix") {
  testing::temp_dir dir("troupe-keys");
  const auto state = (dir.path / "state").string();
  const auto k = open_cluster_keys(state, {});
  ::chmod(k.token_path.c_str(), 0644);
  const auto why = testing::input_error_of([&] { read_token(state); });
  CHECK(why.find(k.token_path) != std::string::npos);
  CHECK(why.find("chmod 600") != std::string::npos);
  ::chmod(k.token_path.c_str(), 0600);
  ::chmod(k.ca_key_path.c_str(), 0640);
  CHECK(testing::input_error_of([&] { open_cluster_keys(state, {}); }).find(k.ca_key_path) !=
        std::string::npos);
  testing::temp_dir empty("troupe-keys");
  CHECK(testing::input_error_of([&] {
          find_member_keys("", "", empty.path.string());
        }).find("no join token") != std::string::npos);
}
