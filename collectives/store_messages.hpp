#pragma once
// The messages of the store actor and the ONE CAF type-id block of collectives/ (in CAF 0.17 the
// wire identity of a type is its registered name, so every binary includes this header).
// The block starts at first_custom_type_id + 200 to stay clear of actors/common/messages.hpp's
// block.
#include <cstdint>
#include <string>
#include <vector>

#include <caf/atom.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/type_id.hpp>

namespace troupe::collectives {

// The answer to a get: `found` is false for a missing key (an empty value is a value).
struct store_value {
  bool found = false;
  std::string value;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, store_value& x) {
  return f(caf::meta::type_name("troupe::collectives::store_value"), x.found, x.value);
}

// The keys of a wait request.
struct store_keys {
  std::vector<std::string> keys;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, store_keys& x) {
  return f(caf::meta::type_name("troupe::collectives::store_keys"), x.keys);
}

}  // namespace troupe::collectives

CAF_BEGIN_TYPE_ID_BLOCK(troupe_collectives, caf::first_custom_type_id + 200)
CAF_ADD_TYPE_ID(troupe_collectives, (troupe::collectives::store_value))
CAF_ADD_TYPE_ID(troupe_collectives, (troupe::collectives::store_keys))
CAF_ADD_TYPE_ID(troupe_collectives, (std::vector<std::string>))
// (st_set, key, value) -> ok_atom
CAF_ADD_ATOM(troupe_collectives, troupe::collectives, st_set_atom, "st_set")
// (st_get, key) -> store_value
CAF_ADD_ATOM(troupe_collectives, troupe::collectives, st_get_atom, "st_get")
// (st_wait, store_keys, ticket, timeout_ms): later (st_done, ticket, missing keys) to the sender
CAF_ADD_ATOM(troupe_collectives, troupe::collectives, st_wait_atom, "st_wait")
CAF_ADD_ATOM(troupe_collectives, troupe::collectives, st_done_atom, "st_done")
CAF_ADD_ATOM(troupe_collectives, troupe::collectives, st_expire_atom, "st_expire")
CAF_END_TYPE_ID_BLOCK(troupe_collectives)
