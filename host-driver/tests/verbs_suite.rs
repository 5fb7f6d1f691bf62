//! The Verbs API test suite (`metaroce-verbs-suite`: data path both ways, misuse,
//! lingering QPs, authenticated mode, the lossy relay) between two soft NICs on
//! loopback. `metaroce-sim-tb`'s `verbs_board` runs the same suite with the simulated
//! board on one side or both.

metaroce_verbs_suite::verbs_suite!(metaroce_verbs_suite::Soft, metaroce_verbs_suite::Soft);
