import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { trpc } from '../trpc';
import { ErrorMessage, PageTitle, Status, when } from '../ui';

/** A completed video whose files were deleted at its `expires_at` (VIDEO_RETENTION_HOURS). */
function expired(video: { expires_at: number | null }): boolean {
  return video.expires_at !== null && video.expires_at * 1000 <= Date.now();
}

export function Videos({ canChange }: { canChange: boolean }) {
  const queryClient = useQueryClient();
  const [page, setPage] = useState(1);
  const list = useQuery({ queryKey: ['videos', page], queryFn: () => trpc.dashboard.account.videos.list.query({ page, limit: 10 }), refetchInterval: 5_000 });
  const [preview, setPreview] = useState<string | null>(null);
  const remove = useMutation({
    mutationFn: (id: string) => trpc.dashboard.account.videos.delete.mutate({ id }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['videos'] }),
  });
  const data = list.data;
  const pages = data ? Math.max(1, Math.ceil(data.pagination.total / data.pagination.limit)) : 1;
  return (
    <section>
      <PageTitle>Videos</PageTitle>
      <ErrorMessage error={list.error ?? remove.error} />
      {list.isPending ? <Status>Loading…</Status> : null}
      {data && data.data.length === 0 ? <p>No videos yet. Create one with POST /v1/videos.</p> : null}
      {data && data.data.length > 0 ? (
        <table>
          <caption>Videos of this account, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Video</th>
              <th scope="col">Model</th>
              <th scope="col">Status</th>
              <th scope="col">Created</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {data.data.map((video) => (
              <tr key={video.id}>
                <td>
                  <code>{video.id}</code>
                </td>
                <td>{video.model}</td>
                <td>
                  {video.status}
                  {video.status === 'processing' ? ` (${video.progress} %)` : ''}
                  {expired(video) ? ' (files expired)' : ''}
                </td>
                <td>{when(video.created_at)}</td>
                <td className="actions">
                  {video.status === 'completed' && !expired(video) ? (
                    <button type="button" onClick={() => setPreview(preview === video.id ? null : video.id)} aria-expanded={preview === video.id}>
                      Preview<span className="visually-hidden"> {video.id}</span>
                    </button>
                  ) : null}
                  {canChange ? (
                    <button
                      type="button"
                      className="danger"
                      onClick={() => {
                        if (window.confirm(`Delete the video ${video.id} and its files for good?`)) remove.mutate(video.id);
                      }}
                    >
                      Delete<span className="visually-hidden"> {video.id}</span>
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {preview ? (
        <figure>
          <video controls width={480} src={`/dashboard/videos/${encodeURIComponent(preview)}/content`} aria-label={`Preview of ${preview}`} />
          <figcaption>{preview}</figcaption>
        </figure>
      ) : null}
      <nav aria-label="Video pages" className="pager">
        <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
          Previous
        </button>
        <span>
          Page {page} of {pages}
        </span>
        <button type="button" disabled={page >= pages} onClick={() => setPage(page + 1)}>
          Next
        </button>
      </nav>
    </section>
  );
}
