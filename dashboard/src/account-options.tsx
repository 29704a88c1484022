import { useQuery } from '@tanstack/react-query';
import { trpc } from './trpc';

/**
 * The accounts as a `<datalist>`, so the staff pages' account-id fields suggest ids by name
 * while still taking any id typed or pasted in.
 */
export function AccountOptions({ id }: { id: string }) {
  const accounts = useQuery({ queryKey: ['staff-accounts'], queryFn: () => trpc.admin.accounts.list.query({ limit: 1000, offset: 0 }) });
  return (
    <datalist id={id}>
      {(accounts.data ?? []).map((account) => (
        <option key={account.id} value={account.id}>
          {account.name}
        </option>
      ))}
    </datalist>
  );
}
