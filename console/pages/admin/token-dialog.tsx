import type { Invitation, User } from '../../../src/client/users';
import { Button } from '../../components/button';
import { CopyField } from '../../components/copy-field';
import { Dialog } from '../../components/dialog';
import { dateTime } from '../../lib/time';

/** What the token is for: a first password (invitation) or a new one (password reset). */
export type TokenKind = 'invitation' | 'password-reset';

/** The page where the user redeems the token; the token itself never goes in a URL. */
export const acceptInvitationUrl = () => `${location.origin}${location.pathname}#/accept-invitation`;

interface Props {
  user: User;
  kind: TokenKind;
  invitation: Invitation;
  onClose: () => void;
}

/**
 * The token just issued, shown this once (the server keeps only its hash, docs/users.md
 * "Invitations and password resets"), with the page where the user redeems it.
 */
export function TokenDialog({ user, kind, invitation, onClose }: Props) {
  const reset = kind === 'password-reset';
  return (
    <Dialog title={reset ? `Password reset for ${user.email}` : `Invitation for ${user.email}`} onClose={onClose}>
      <div class="dialog-body">
        <p>
          Pass the token to {user.email}: on the invitation page they enter it and {reset ? 'a new password' : 'their password'}. It works once, until{' '}
          {dateTime(invitation.expires_at)}.
        </p>
        <p>
          <strong>It is shown only now</strong>: closing this dialog hides it for good; a new one voids it.
        </p>
        {reset && <p>Their old password works until the token is used.</p>}
      </div>
      <div class="form">
        <CopyField label="Invitation token" value={invitation.invitation_token} />
        <CopyField label="Invitation page" value={acceptInvitationUrl()} />
      </div>
      <div class="actions">
        <Button kind="primary" autofocus onClick={onClose}>
          Done
        </Button>
      </div>
    </Dialog>
  );
}
