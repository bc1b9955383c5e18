/** What a ServiceAccount may do, asked the way the API server decides it (a SubjectAccessReview). */
import { AuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';

/** One request to check: `verb` on `resource` of API `group` (`''` for core) in `namespace`. */
export interface AccessQuestion {
  /** `system:serviceaccount:<namespace>:<name>`. */
  readonly user: string;
  readonly namespace: string;
  readonly group: string;
  readonly resource: string;
  readonly verb: string;
}

/** Whether the API server would allow `question.user` (a ServiceAccount) the request. */
export async function isAllowed(kubeConfig: KubeConfig, question: AccessQuestion): Promise<boolean> {
  const { user, namespace, group, resource, verb } = question;
  const review = await kubeConfig.makeApiClient(AuthorizationV1Api).createSubjectAccessReview({
    body: {
      spec: {
        user,
        groups: ['system:serviceaccounts'],
        resourceAttributes: { namespace, group, resource, verb },
      },
    },
  });
  return review.status?.allowed === true;
}
