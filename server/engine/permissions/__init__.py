"""The permission gate: denied paths, the permission mode, the user's rules,
then the autonomy dial — in that order (autonomy-and-safety.md, "Gate Decisions")."""
