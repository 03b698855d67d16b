// Small helpers for the router's JSON forms (the project's `JSONValue`).

/// A string map as a JSON object, members in key order (deterministic output).
func jsonObject(_ map: [String: String]) -> JSONValue {
    .object(JSONObject(map.keys.sorted().map { ($0, JSONValue.string(map[$0]!)) }))
}

func jsonString(_ s: String?) -> JSONValue { s.map { .string($0) } ?? .null }
