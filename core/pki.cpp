#include "core/pki.hpp"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <arpa/inet.h>

#include <memory>

#include "core/error.hpp"

namespace troupe::pki {
namespace {

template <class T, void (*Free)(T*)>
struct freer {
  void operator()(T* p) const { Free(p); }
};
using bio_ptr = std::unique_ptr<BIO, freer<BIO, BIO_free_all>>;
using key_ptr = std::unique_ptr<EVP_PKEY, freer<EVP_PKEY, EVP_PKEY_free>>;
using cert_ptr = std::unique_ptr<X509, freer<X509, X509_free>>;
using req_ptr = std::unique_ptr<X509_REQ, freer<X509_REQ, X509_REQ_free>>;
using store_ptr = std::unique_ptr<X509_STORE, freer<X509_STORE, X509_STORE_free>>;
using store_ctx_ptr = std::unique_ptr<X509_STORE_CTX, freer<X509_STORE_CTX, X509_STORE_CTX_free>>;

// OpenSSL's queued errors as one line (and the queue emptied).
std::string ssl_errors() {
  std::string out;
  while (const auto e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    out += (out.empty() ? "" : "; ") + std::string(buf);
  }
  return out.empty() ? "unknown OpenSSL error" : out;
}

[[noreturn]] void fail(const std::string& what) {
  throw runtime_failure(what + ": " + ssl_errors());
}

bio_ptr read_bio(const std::string& pem) {
  bio_ptr b{BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()))};
  if (!b) fail("BIO_new_mem_buf");
  return b;
}

template <class F>
std::string write_pem(F write) {
  bio_ptr b{BIO_new(BIO_s_mem())};
  if (!b || write(b.get()) != 1) fail("PEM write");
  char* data = nullptr;
  const long n = BIO_get_mem_data(b.get(), &data);
  return std::string(data, static_cast<std::size_t>(n));
}

// Text that is not a PEM `what` is the caller's input, not an OpenSSL failure.
template <class Ptr, class Read>
Ptr load_pem(const std::string& pem, Read read, const char* what) {
  auto b = read_bio(pem);
  Ptr p{read(b.get(), nullptr, nullptr, nullptr)};
  if (!p) {
    ERR_clear_error();
    throw input_error(std::string("not a PEM ") + what);
  }
  return p;
}

key_ptr load_key(const std::string& pem) {
  return load_pem<key_ptr>(pem, PEM_read_bio_PrivateKey, "private key");
}

cert_ptr load_cert(const std::string& pem) {
  return load_pem<cert_ptr>(pem, PEM_read_bio_X509, "certificate");
}

void add_extension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (!ext) fail("certificate extension " + value);
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

bool is_ip(const std::string& s) {
  unsigned char buf[16];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

std::string name_entry(X509_NAME* name, int nid) {
  char buf[256];
  const int n = X509_NAME_get_text_by_NID(name, nid, buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string{};
}

// A certificate for `pub` with subject CN=common_name, signed by the CA (itself when `ca_cert`
// is null: a self-signed authority).
cert_ptr build(EVP_PKEY* pub, const std::string& common_name, X509* ca_cert, EVP_PKEY* ca_key,
               const std::string& usage, const std::string& extended,
               const std::vector<std::string>& names, int days, bool authority) {
  cert_ptr c{X509_new()};
  if (!c) fail("X509_new");
  X509_set_version(c.get(), 2);
  // A random 159-bit serial: unique without a counter to keep.
  unsigned char serial[20];
  if (RAND_bytes(serial, sizeof serial) != 1) fail("RAND_bytes");
  serial[0] &= 0x7f;
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(c.get()));
  BN_free(bn);
  // Five minutes back: a peer whose clock is a little behind still accepts it.
  X509_gmtime_adj(X509_getm_notBefore(c.get()), -300);
  X509_gmtime_adj(X509_getm_notAfter(c.get()), static_cast<long>(days) * 86400L);
  X509_set_pubkey(c.get(), pub);
  X509_NAME* subject = X509_get_subject_name(c.get());
  X509_NAME_add_entry_by_txt(subject, "O", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("troupe"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1,
                             0);
  X509_set_issuer_name(c.get(), ca_cert ? X509_get_subject_name(ca_cert) : subject);
  X509* issuer = ca_cert ? ca_cert : c.get();
  add_extension(c.get(), issuer, NID_basic_constraints,
                authority ? "critical,CA:TRUE,pathlen:0" : "critical,CA:FALSE");
  add_extension(c.get(), issuer, NID_key_usage, usage);
  if (!extended.empty()) add_extension(c.get(), issuer, NID_ext_key_usage, extended);
  add_extension(c.get(), issuer, NID_subject_key_identifier, "hash");
  if (!names.empty()) {
    std::string alt;
    for (const auto& n : names)
      alt += std::string(alt.empty() ? "" : ",") + (is_ip(n) ? "IP:" : "DNS:") + n;
    add_extension(c.get(), issuer, NID_subject_alt_name, alt);
  }
  if (X509_sign(c.get(), ca_key, EVP_sha256()) <= 0) fail("X509_sign");
  return c;
}

// The subject-alternative names, host names and addresses, in the certificate's order.
std::vector<std::string> alt_names(X509* c) {
  std::vector<std::string> out;
  auto* names =
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(c, NID_subject_alt_name, nullptr, nullptr));
  if (!names) return out;
  for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* g = sk_GENERAL_NAME_value(names, i);
    if (g->type == GEN_DNS) {
      const auto* s = g->d.dNSName;
      out.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                       static_cast<std::size_t>(ASN1_STRING_length(s)));
    } else if (g->type == GEN_IPADD) {
      const auto* s = g->d.iPAddress;
      const int len = ASN1_STRING_length(s);
      char text[INET6_ADDRSTRLEN] = {};
      if ((len == 4 || len == 16) &&
          inet_ntop(len == 4 ? AF_INET : AF_INET6, ASN1_STRING_get0_data(s), text, sizeof text))
        out.emplace_back(text);
    }
  }
  GENERAL_NAMES_free(names);
  return out;
}

const char* extended_usage(role r) {
  return r == role::control ? "serverAuth" : "clientAuth";
}

std::string cert_pem(X509* c) {
  return write_pem([&](BIO* b) { return PEM_write_bio_X509(b, c); });
}

}  // namespace

std::string make_key() {
  key_ptr k{EVP_EC_gen("P-256")};
  if (!k) fail("EVP_EC_gen");
  return write_pem([&](BIO* b) {
    return PEM_write_bio_PrivateKey(b, k.get(), nullptr, nullptr, 0, nullptr, nullptr);
  });
}

authority make_authority(const std::string& name) {
  authority ca;
  ca.key_pem = make_key();
  auto k = load_key(ca.key_pem);
  auto c =
      build(k.get(), name, nullptr, k.get(), "critical,keyCertSign,cRLSign", "", {}, 3650, true);
  ca.cert_pem = cert_pem(c.get());
  return ca;
}

std::string make_request(const std::string& key_pem, const std::string& common_name) {
  auto k = load_key(key_pem);
  req_ptr r{X509_REQ_new()};
  if (!r) fail("X509_REQ_new");
  X509_REQ_set_pubkey(r.get(), k.get());
  X509_NAME* subject = X509_REQ_get_subject_name(r.get());
  X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1,
                             0);
  if (X509_REQ_sign(r.get(), k.get(), EVP_sha256()) <= 0) fail("X509_REQ_sign");
  return write_pem([&](BIO* b) { return PEM_write_bio_X509_REQ(b, r.get()); });
}

std::string sign_request(const authority& ca, const std::string& request_pem,
                         const std::string& common_name, role r,
                         const std::vector<std::string>& names, int days) {
  auto b = read_bio(request_pem);
  req_ptr req{PEM_read_bio_X509_REQ(b.get(), nullptr, nullptr, nullptr)};
  if (!req) {
    ERR_clear_error();
    throw input_error("the certificate request is not a PEM certificate request");
  }
  key_ptr pub{X509_REQ_get_pubkey(req.get())};
  if (!pub || X509_REQ_verify(req.get(), pub.get()) != 1) {
    ERR_clear_error();
    throw input_error("the certificate request's signature does not verify");
  }
  auto ca_key = load_key(ca.key_pem);
  auto ca_cert = load_cert(ca.cert_pem);
  auto c = build(pub.get(), common_name, ca_cert.get(), ca_key.get(),
                 "critical,digitalSignature,keyAgreement", extended_usage(r), names, days, false);
  return cert_pem(c.get());
}

std::string issue(const authority& ca, const std::string& key_pem, const std::string& common_name,
                  role r, const std::vector<std::string>& names, int days) {
  auto k = load_key(key_pem);
  auto ca_key = load_key(ca.key_pem);
  auto ca_cert = load_cert(ca.cert_pem);
  auto c = build(k.get(), common_name, ca_cert.get(), ca_key.get(),
                 "critical,digitalSignature,keyAgreement", extended_usage(r), names, days, false);
  return cert_pem(c.get());
}

certificate_info inspect(const std::string& pem) {
  auto c = load_cert(pem);
  certificate_info info;
  info.common_name = name_entry(X509_get_subject_name(c.get()), NID_commonName);
  info.issuer = name_entry(X509_get_issuer_name(c.get()), NID_commonName);
  info.names = alt_names(c.get());
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  X509_digest(c.get(), EVP_sha256(), md, &n);
  static const char digits[] = "0123456789abcdef";
  for (unsigned i = 0; i < n; ++i) {
    info.fingerprint.push_back(digits[md[i] >> 4]);
    info.fingerprint.push_back(digits[md[i] & 15]);
  }
  return info;
}

certificate_info verify(const std::string& pem, const std::string& ca_pem, role r) {
  auto c = load_cert(pem);
  auto ca = load_cert(ca_pem);
  store_ptr store{X509_STORE_new()};
  store_ctx_ptr ctx{X509_STORE_CTX_new()};
  if (!store || !ctx || X509_STORE_add_cert(store.get(), ca.get()) != 1 ||
      X509_STORE_CTX_init(ctx.get(), store.get(), c.get(), nullptr) != 1)
    fail("X509_STORE");
  X509_STORE_CTX_set_purpose(
      ctx.get(), r == role::control ? X509_PURPOSE_SSL_SERVER : X509_PURPOSE_SSL_CLIENT);
  if (X509_verify_cert(ctx.get()) != 1) {
    const std::string why = X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx.get()));
    ERR_clear_error();
    throw input_error("the certificate does not verify against the cluster's CA: " + why);
  }
  return inspect(pem);
}

bool key_matches(const std::string& key_pem, const std::string& pem) {
  auto k = load_key(key_pem);
  auto c = load_cert(pem);
  return X509_check_private_key(c.get(), k.get()) == 1;
}

}  // namespace troupe::pki
