import './base.css';
import './notebook-ui.css';
