#include "core/pki.hpp"

#include <doctest/doctest.h>

#include "core/error.hpp"

using namespace troupe;

TEST_CASE("a certificate signed from a request verifies against its CA only, in its role") {
  const auto ca = pki::make_authority("test CA");
  const auto key = pki::make_key();
  const auto request = pki::make_request(key, "whatever-the-agent-says");
  const auto cert = pki::sign_request(ca, request, "agent:east", pki::role::agent, {}, 1);
  CHECK(pki::key_matches(key, cert));
  CHECK_FALSE(pki::key_matches(pki::make_key(), cert));
  // The signer names the certificate, not the request.
  const auto info = pki::verify(cert, ca.cert_pem, pki::role::agent);
  CHECK(info.common_name == "agent:east");
  CHECK(info.issuer == "test CA");
  CHECK(info.fingerprint.size() == 64);

  const auto other = pki::make_authority("another cluster's CA");
  CHECK_THROWS_AS(pki::verify(cert, other.cert_pem, pki::role::agent), input_error);
  // An agent's certificate cannot act as the control process (server) certificate.
  CHECK_THROWS_AS(pki::verify(cert, ca.cert_pem, pki::role::control), input_error);

  CHECK(info.names.empty());
  const auto control = pki::issue(ca, pki::make_key(), "control", pki::role::control,
                                  {"127.0.0.1", "localhost", "::1"}, 1);
  const auto control_info = pki::verify(control, ca.cert_pem, pki::role::control);
  CHECK(control_info.common_name == "control");
  CHECK(control_info.names == std::vector<std::string>{"127.0.0.1", "localhost", "::1"});
  CHECK_THROWS_AS(pki::verify(control, ca.cert_pem, pki::role::agent), input_error);
}

TEST_CASE("a request that is not one, or whose signature was changed, is refused") {
  const auto ca = pki::make_authority("test CA");
  CHECK_THROWS_AS(pki::sign_request(ca, "junk", "x", pki::role::agent, {}, 1), input_error);
  auto request = pki::make_request(pki::make_key(), "east");
  // Flip a character inside the base64 body (past the header line): the signature breaks, or
  // the DER does not parse; either way no certificate comes out.
  const auto at = request.find('\n') + 40;
  request[at] = request[at] == 'A' ? 'B' : 'A';
  CHECK_THROWS_AS(pki::sign_request(ca, request, "x", pki::role::agent, {}, 1), input_error);
  CHECK_THROWS_AS(pki::inspect("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"),
                  input_error);
}
