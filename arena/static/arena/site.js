// The pages' own behaviour, from this file alone (the Content-Security-Policy allows no inline
// script): a form with data-confirm asks before it is sent, a button with data-copy copies the
// field it names. Delegated from the document, so parts htmx swaps in work too.
document.addEventListener("submit", function (event) {
  var form = event.target.closest("form[data-confirm]");
  if (form && !window.confirm(form.dataset.confirm)) {
    event.preventDefault();
  }
});
document.addEventListener("click", function (event) {
  var button = event.target.closest("[data-copy]");
  if (!button) {
    return;
  }
  var field = document.querySelector(button.dataset.copy);
  field.select();
  (navigator.clipboard ? navigator.clipboard.writeText(field.value) : Promise.reject())
    .then(function () { button.textContent = "Copied"; })
    .catch(function () { document.execCommand("copy"); button.textContent = "Copied"; });
});
