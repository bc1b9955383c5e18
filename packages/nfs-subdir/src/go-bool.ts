/**
 * Go's `strconv.ParseBool`, which both upstream programs use for `archiveOnDelete` and
 * `ENABLE_LEADER_ELECTION`; it lives in the CLI toolkit beside the flag that reads it.
 */
export { goBooleanSpellings, parseGoBoolean } from '@kube-provisioner/controller/cli';
