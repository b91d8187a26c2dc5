import { useEffect, useId, useState } from 'preact/hooks';
import type { Command } from '../../../../src/client/commands';
import type { DevicePage } from '../../../../src/client/devices';
import { Button } from '../../../components/button';
import { ErrorMessage } from '../../../components/error-message';
import { Field } from '../../../components/field';
import { SelectField } from '../../../components/select-field';
import { api, customerPath } from '../../../lib/api';
import { can } from '../../../lib/session';
import { useSubmit } from '../../../lib/use-submit';
import { FEEDBACK_SEQUENCES, INITIAL_VALUES, TTL_CHOICES, commandInput, type CommandFormValues, type FormCommand } from './command-input';

/** Scanners suggested for the `Scanner` field: the gateway's, by their newest event (docs/devices.md). */
const SUGGESTED_SCANNERS = 100;

interface Props {
  gatewayId: string;
  /** The scanner chosen at first (the Scanners page's row). */
  deviceId?: string;
  onSent: (command: Command) => void;
  /** Shows a Cancel button beside `Send command` (in a dialog). */
  onCancel?: () => void;
}

/** The scanners whose newest event came through the gateway, to suggest; none without event.read. */
function useGatewayScanners(gatewayId: string): string[] {
  const [ids, setIds] = useState<string[]>([]);
  useEffect(() => {
    if (!can('event.read')) return;
    const controller = new AbortController();
    const query = new URLSearchParams({ gateway_id: gatewayId, limit: String(SUGGESTED_SCANNERS) });
    api.get<DevicePage>(`${customerPath('/devices')}?${query}`, { signal: controller.signal }).then(
      (page) => setIds(page.items.map((d) => d.device_id)),
      // Only suggestions: the field takes any id without them.
      () => undefined,
    );
    return () => controller.abort();
  }, [gatewayId]);
  return ids;
}

/** Sends `feedback` or `display` to a gateway, or through it to one of its scanners (POST .../commands). */
export function CommandForm({ gatewayId, deviceId = '', onSent, onCancel }: Props) {
  const id = useId();
  const [values, setValues] = useState<CommandFormValues>({ ...INITIAL_VALUES, deviceId });
  const set = (change: Partial<CommandFormValues>) => setValues((v) => ({ ...v, ...change }));
  const scanners = useGatewayScanners(gatewayId);
  const { busy, error, submit } = useSubmit(async () => {
    const body = commandInput(values);
    onSent(await api.post<Command>(customerPath(`/gateways/${encodeURIComponent(gatewayId)}/commands`), body));
  });
  return (
    <form class="form command-form" onSubmit={submit}>
      <SelectField
        label="Command"
        value={values.name}
        options={[
          { value: 'feedback', label: 'feedback (a signal)' },
          { value: 'display', label: 'display (a text)' },
        ]}
        onValue={(name) => set({ name: name as FormCommand })}
      />
      {values.name === 'feedback' ? (
        <SelectField label="Sequence" value={values.sequence} options={FEEDBACK_SEQUENCES.map((s) => ({ value: s, label: s }))} onValue={(sequence) => set({ sequence: sequence as CommandFormValues['sequence'] })} />
      ) : (
        <>
          <Field label="Template" required maxLength={200} value={values.template} onValue={(template) => set({ template })} hint="The name of a template the gateway knows." />
          <div class="field">
            <label for={`${id}-fields`}>Fields</label>
            <textarea id={`${id}-fields`} rows={3} spellcheck={false} value={values.fields} onInput={(event) => set({ fields: event.currentTarget.value })} aria-describedby={`${id}-fields-hint`} />
            <p class="hint" id={`${id}-fields-hint`}>
              One key=value a line, such as qty=3, filled into the template.
            </p>
          </div>
        </>
      )}
      <Field
        label="Scanner"
        maxLength={200}
        spellcheck={false}
        value={values.deviceId}
        onValue={(deviceId) => set({ deviceId })}
        list={`${id}-scanners`}
        hint="Its device id; empty for the gateway itself."
      />
      <datalist id={`${id}-scanners`}>
        {scanners.map((scanner) => (
          <option key={scanner} value={scanner} />
        ))}
      </datalist>
      <SelectField
        label="Time to live"
        value={String(values.ttlSeconds)}
        options={TTL_CHOICES.map((c) => ({ value: String(c.seconds), label: c.label }))}
        onValue={(seconds) => set({ ttlSeconds: Number(seconds) })}
        hint="Not delivered by then, it expires."
      />
      <ErrorMessage error={error} />
      <div class="actions">
        {onCancel && <Button onClick={onCancel}>Cancel</Button>}
        <Button type="submit" kind="primary" busy={busy}>
          Send command
        </Button>
      </div>
    </form>
  );
}
