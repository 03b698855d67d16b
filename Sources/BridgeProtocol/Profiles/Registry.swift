/// The registered profiles (Profile.swift): one line each. A profile is a folder of
/// `Profiles/` whose configuration type conforms to `ProfileBehavior` (and so to
/// `ProfileConfiguration`) and whose sessions' state conforms to `ProfileState`; adding its type
/// here makes `session.create {profile}`, `bridged open --profile` and `bridged check --profile`
/// know it.
extension ProfileRegistry {
    public static let standard = ProfileRegistry([
        HotwireProfile.self,
    ])
}
