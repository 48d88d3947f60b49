#pragma once
// The cluster's certificates (OpenSSL): a certificate authority made at the first start of a
// control process, the control process's certificate, and the one an agent gets at join from
// a certificate signing request. Keys are ECDSA P-256; everything travels as PEM text.
//
// A certificate's role is its extended key usage, which OpenSSL checks during every handshake:
// the control process's says serverAuth and an agent's clientAuth, so an agent's certificate
// cannot pose as the control process to another agent, and the other way round.
#include <string>
#include <vector>

namespace troupe::pki {

enum class role { control, agent };

struct authority {
  std::string key_pem;   // the CA's private key
  std::string cert_pem;  // its self-signed certificate (what every member trusts)
};

// A new CA named `name` (the subject's common name), valid for 10 years.
authority make_authority(const std::string& name);

// A new private key.
std::string make_key();

// A certificate signing request for `key_pem`'s public key with subject CN=common_name.
std::string make_request(const std::string& key_pem, const std::string& common_name);

// What a certificate holds, for checks and messages.
struct certificate_info {
  std::string common_name;
  std::string issuer;
  std::string fingerprint;         // SHA-256 of the DER, hex
  std::vector<std::string> names;  // subject-alternative host names and addresses
};

// Signs `request_pem` with the CA: a certificate for the request's public key (after checking
// the request's own signature) with subject CN=common_name (the signer's choice, not the
// request's), the role's key usage, the given subject-alternative-name addresses and host names,
// valid for `days`. input_error when the request is not a valid signed PEM request.
std::string sign_request(const authority& ca, const std::string& request_pem,
                         const std::string& common_name, role r,
                         const std::vector<std::string>& names, int days);

// A certificate for `key_pem` directly (the control process signs its own).
std::string issue(const authority& ca, const std::string& key_pem, const std::string& common_name,
                  role r, const std::vector<std::string>& names, int days);

// Checks `cert_pem` against the CA `ca_pem` (signature, validity period, role): returns its
// info, or throws input_error saying what is wrong.
certificate_info verify(const std::string& cert_pem, const std::string& ca_pem, role r);

// The certificate's info, unchecked (input_error when it is not a PEM certificate).
certificate_info inspect(const std::string& cert_pem);

// Whether the private key belongs to the certificate.
bool key_matches(const std::string& key_pem, const std::string& cert_pem);

}  // namespace troupe::pki
