/**
 * The single-leader check lives in the controller's `/testing` export, where the controller's own
 * end-to-end hand-over test uses it too; the chaos suite applies it to its replicas' logs.
 */
export {
  findOverlaps,
  type LeaseTenure,
  type Overlap,
  overlapWindows,
  type WorkLine,
} from '@kube-provisioner/controller/testing';
