import HTTPTypes

extension HTTPFields {
    /// `self[name]` (a field's values joined, nil when absent) by a scan of the fields: the
    /// subscript builds the fields' name index on its first lookup and a joined copy of the
    /// value, and the middlewares' few reads per request paid for both (about a percent of a
    /// cached deck request's CPU each). Several fields of the name still join as the subscript does.
    ///
    /// - Parameter name: The field name.
    /// - Returns: The value, or nil.
    func value(_ name: HTTPField.Name) -> String? {
        var found: String?
        for field in self where field.name == name {
            if found != nil { return self[name] }
            found = field.value
        }
        return found
    }
}
