export function BoardView() {
  return (
    <div class="view">
      <h1>Board</h1>
    </div>
  );
}
